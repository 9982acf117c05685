print("cellpath")
